import { useState } from 'react';
import { useMutation } from 'urql';
import { getFragmentData, graphql } from '../gql';
import { AGENT_LIMITS } from '../../../server/src/limits.js';
import { tooLong, TooLongNote } from '../components/TooLong';
import { errorInfo } from '../lib/errors';

// Registering an agent from the Agents page (admins, as the mutations require): A2A by its Agent
// Card URL, or AG-UI by its endpoint URL and a name (AG-UI has no card to read a name from;
// docs/AG-UI.md "Registering an agent"). The server checks the URL and the agent network policy;
// the form shows its refusals as they are, with a headline for the kinds an admin can act on.

export const RegisteredAgentFields = graphql(`
  fragment RegisteredAgent on Agent {
    id
    name
    kind
    cardUrl
    endpointUrl
  }
`);

const RegisterA2a = graphql(`
  mutation RegisterAgent($cardUrl: String!) {
    registerAgent(input: { cardUrl: $cardUrl }) {
      ...RegisteredAgent
    }
  }
`);

const RegisterAgUi = graphql(`
  mutation RegisterAgUiAgent($endpointUrl: String!, $name: String!) {
    registerAgUiAgent(input: { endpointUrl: $endpointUrl, name: $name }) {
      ...RegisteredAgent
    }
  }
`);

type Protocol = 'A2A' | 'AG_UI';

/** What an admin can do about a refusal, by the server's `failure` extension (net/failure.ts kinds). */
const HEADLINES: Record<string, string> = {
  refused: 'The agent network policy refuses this address (TASKBAY_AGENT_NETWORKS).',
  unreachable: 'The address could not be reached or resolved.',
  timeout: 'The agent did not answer in time.',
  http_status: 'The agent answered with an HTTP error.',
  invalid_answer: 'The answer is not a valid Agent Card.',
};

export function RegisterAgentForm() {
  const [protocol, setProtocol] = useState<Protocol>('A2A');
  const [cardUrl, setCardUrl] = useState('');
  const [endpointUrl, setEndpointUrl] = useState('');
  const [name, setName] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [a2a, registerA2a] = useMutation(RegisterA2a);
  const [agui, registerAgUi] = useMutation(RegisterAgUi);
  const active = protocol === 'A2A' ? a2a : agui;
  const e = errorInfo(active.error);
  const headline = e && HEADLINES[String(e.extensions.failure ?? '')];
  const nameTooLong = protocol === 'AG_UI' ? tooLong('The name', name.trim(), AGENT_LIMITS.nameMax) : null;
  const ready = protocol === 'A2A' ? cardUrl.trim() !== '' : endpointUrl.trim() !== '' && name.trim() !== '' && !nameTooLong;

  const submit = async () => {
    setDone(null);
    if (protocol === 'A2A') {
      const r = await registerA2a({ cardUrl: cardUrl.trim() });
      const agent = getFragmentData(RegisteredAgentFields, r.data?.registerAgent);
      if (agent) {
        setCardUrl('');
        setDone(`Registered ${agent.name} (A2A).`);
      }
    } else {
      const r = await registerAgUi({ endpointUrl: endpointUrl.trim(), name: name.trim() });
      const agent = getFragmentData(RegisteredAgentFields, r.data?.registerAgUiAgent);
      if (agent) {
        setEndpointUrl('');
        setName('');
        setDone(`Registered ${agent.name} (AG-UI, ${agent.endpointUrl}).`);
      }
    }
  };

  return (
    // noValidate: the server judges the URL (and says why), one set of messages for both protocols.
    <form
      className="card register-agent"
      aria-label="Register an agent"
      noValidate
      onSubmit={(ev) => {
        ev.preventDefault();
        if (ready) void submit();
      }}
    >
      <fieldset className="buttons inline">
        <legend>Protocol</legend>
        <label>
          <input type="radio" name="protocol" value="A2A" checked={protocol === 'A2A'} onChange={() => setProtocol('A2A')} /> A2A, by its Agent Card
        </label>
        <label>
          <input type="radio" name="protocol" value="AG_UI" checked={protocol === 'AG_UI'} onChange={() => setProtocol('AG_UI')} /> AG-UI, by its endpoint
        </label>
      </fieldset>
      {protocol === 'A2A' ? (
        <div className="inline">
          <label htmlFor="card-url">Agent Card URL</label>
          <input id="card-url" type="url" value={cardUrl} onChange={(ev) => setCardUrl(ev.target.value)} placeholder="https://agent.example/card.json" />
        </div>
      ) : (
        <div className="inline">
          <label htmlFor="agui-endpoint">Endpoint URL</label>
          <input
            id="agui-endpoint"
            type="url"
            value={endpointUrl}
            onChange={(ev) => setEndpointUrl(ev.target.value)}
            placeholder="https://agent.example/agui"
          />
          <label htmlFor="agui-name">Name</label>
          <input
            id="agui-name"
            type="text"
            value={name}
            onChange={(ev) => setName(ev.target.value)}
            placeholder="Mailer"
            aria-invalid={nameTooLong ? true : undefined}
            aria-describedby={nameTooLong ? 'agui-name-too-long' : undefined}
          />
          <TooLongNote id="agui-name-too-long" reason={nameTooLong} />
        </div>
      )}
      <p className="muted">
        {protocol === 'A2A'
          ? 'Taskbay fetches the card now and reads the name, skills and extensions from it.'
          : 'Where the agent takes a RunAgentInput by POST and answers over SSE. AG-UI has no card: name the agent.'}
      </p>
      <button type="submit" className="primary" disabled={active.fetching || !ready}>
        Register
      </button>
      {e && (
        <p className="error" role="alert">
          {headline && <strong>{`${headline} `}</strong>}
          {`${e.code}: ${e.message}`}
        </p>
      )}
      {done && !e && <p role="status">{done}</p>}
    </form>
  );
}
