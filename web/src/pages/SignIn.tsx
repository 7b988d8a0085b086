import { useState } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../gql';

const SignInMutation = graphql(`
  mutation SignIn($email: String!, $password: String!) {
    signIn(email: $email, password: $password) {
      id
      email
    }
  }
`);

export function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [{ fetching, error }, signIn] = useMutation(SignInMutation);
  return (
    <main className="signin">
      <h1>Taskbay</h1>
      <form
        aria-label="Sign in"
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await signIn({ email, password });
          // A full reload so the live connection opens with the new session cookie.
          if (r.data?.signIn) location.reload();
        }}
      >
        <div className="field">
          <label htmlFor="email">Email</label>
          <input id="email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="password">Password</label>
          <input id="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </div>
        {error && (
          <p className="error" role="alert">
            {error.graphQLErrors[0]?.message ?? error.message}
          </p>
        )}
        <button type="submit" disabled={fetching}>
          Sign in
        </button>
      </form>
    </main>
  );
}
