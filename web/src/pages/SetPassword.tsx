import { useEffect, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { PASSWORD_LIMITS } from '../../../server/src/limits.js';
import { graphql } from '../gql';

// A one-time sign-in link's page (/set-password#<secret>, server/src/auth/sign-in-links.ts): whom
// it is for, and a new password; choosing one signs the person in. The secret is taken from the
// fragment once and the fragment cleared, so it stays out of the address bar and the history.

const SignInLinkQuery = graphql(`
  query SignInLinkPage($secret: String!) {
    signInLink(secret: $secret) {
      email
      name
      expiresAt
    }
  }
`);

const SetPasswordMutation = graphql(`
  mutation SetPasswordWithLinkPage($secret: String!, $password: String!) {
    setPasswordWithLink(secret: $secret, password: $password) {
      id
    }
  }
`);

/** The fragment's secret, kept once read: a render React discards and redoes still finds it after the fragment is cleared. */
let secretOfThisLoad = '';
function linkSecret(): string {
  const fromHash = decodeURIComponent(location.hash.slice(1));
  if (fromHash) secretOfThisLoad = fromHash;
  return secretOfThisLoad;
}

export function SetPasswordPage() {
  const [secret] = useState(linkSecret);
  const [{ data, fetching: reading, error: readError }] = useQuery({
    query: SignInLinkQuery,
    variables: { secret },
    pause: !secret,
    requestPolicy: 'network-only',
  });
  const [{ fetching, error }, setPassword] = useMutation(SetPasswordMutation);
  const [password, setPasswordText] = useState('');
  const [again, setAgain] = useState('');
  const [mismatch, setMismatch] = useState(false);
  useEffect(() => {
    document.title = 'Choose a password · Taskbay';
    if (location.hash) history.replaceState(null, '', location.pathname);
  }, []);
  const link = data?.signInLink;
  return (
    <main className="signin">
      <h1>Choose a password</h1>
      {!secret || (!reading && !readError && data && !link) ? (
        <p className="error" role="alert">
          This sign-in link cannot be used: it was used already, it expired, or it is incomplete. Open the whole link again, or ask an admin for a new one.{' '}
          <a href="/">Sign in</a>
        </p>
      ) : readError ? (
        <p className="error" role="alert">{`Cannot reach the server: ${readError.message}`}</p>
      ) : !link ? (
        <p className="loading">Loading…</p>
      ) : (
        <form
          aria-label="Choose a password"
          onSubmit={async (e) => {
            e.preventDefault();
            if (password !== again) {
              setMismatch(true);
              return;
            }
            setMismatch(false);
            const r = await setPassword({ secret, password });
            // A full load so the live connection opens with the new session cookie.
            if (r.data?.setPasswordWithLink) location.assign('/');
          }}
        >
          <p>
            {`For ${link.name} (${link.email}). This link works once, until ${new Date(link.expiresAt).toLocaleString()}; you then sign in with this password.`}
          </p>
          <div className="field">
            <label htmlFor="email">Email</label>
            <input id="email" type="email" autoComplete="username" readOnly value={link.email} />
          </div>
          <div className="field">
            <label htmlFor="new-password">New password</label>
            <input
              id="new-password"
              type="password"
              autoComplete="new-password"
              required
              minLength={PASSWORD_LIMITS.min}
              maxLength={PASSWORD_LIMITS.max}
              value={password}
              onChange={(e) => setPasswordText(e.target.value)}
              aria-describedby="password-rule"
            />
            <p id="password-rule" className="muted">{`At least ${PASSWORD_LIMITS.min} characters.`}</p>
          </div>
          <div className="field">
            <label htmlFor="repeat-password">Repeat the password</label>
            <input id="repeat-password" type="password" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.target.value)} />
          </div>
          {(mismatch || error) && (
            <p className="error" role="alert">
              {mismatch ? 'The two passwords differ.' : (error!.graphQLErrors[0]?.message ?? error!.message)}
            </p>
          )}
          <button type="submit" disabled={fetching}>
            Set password and sign in
          </button>
        </form>
      )}
    </main>
  );
}
