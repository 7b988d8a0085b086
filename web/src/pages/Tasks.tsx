import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { errorInfo } from '../lib/errors';
import { Link, useRouter } from '../lib/router';
import { age, useNow } from '../lib/time';
import { FormView } from '../render/FormView';
import { readForm } from '../render/form';
import { NoAccessNote } from '../components/NoAccess';

const TasksQuery = graphql(`
  query Tasks {
    tasks(first: 100) {
      edges {
        node {
          id
          state
          skillId
          createdAt
          updatedAt
          agent {
            id
            name
          }
        }
      }
    }
    agents {
      id
      name
      kind
      startForm
      skills {
        id
        name
        description
      }
    }
  }
`);

const StartTask = graphql(`
  mutation StartTask($input: StartTaskInput!) {
    startTask(input: $input) {
      id
      state
    }
  }
`);

export function TasksPage() {
  const [{ data, error }] = useQuery({ query: TasksQuery });
  const [open, setOpen] = useState(false);
  const now = useNow(5000);
  return (
    <section aria-labelledby="tasks-h">
      <h1 id="tasks-h">Tasks</h1>
      <button type="button" className="primary" onClick={() => setOpen(!open)} aria-expanded={open}>
        Start a task
      </button>
      {open && data && <StartTaskDialog agents={data.agents.filter((a) => a.kind === 'A2A' || a.kind === 'AG_UI')} onClose={() => setOpen(false)} />}
      {error && <p className="error">{error.message}</p>}
      {data && data.tasks.edges.length === 0 && <NoAccessNote what="tasks" />}
      <ul className="tasks" aria-label="Tasks">
        {data?.tasks.edges.map(({ node: t }) => (
          <li key={t.id} className="row">
            <span className={`badge state-${t.state.toLowerCase()}`}>{t.state.replace('_', ' ')}</span>
            <Link to={`/tasks/${encodeURIComponent(t.id)}`} className="title">
              {`${t.agent.name}${t.skillId ? ` · ${t.skillId}` : ''}`}
            </Link>
            <span className="meta">{`started ${age(t.createdAt, now)} · updated ${age(t.updatedAt, now)}`}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

type AgentChoice = { id: string; name: string; startForm?: unknown; skills: { id: string; name: string; description?: string | null }[] };

function StartTaskDialog({ agents, onClose }: { agents: AgentChoice[]; onClose: () => void }) {
  const [agentId, setAgentId] = useState(agents[0]?.id ?? '');
  const [skillId, setSkillId] = useState('');
  const [text, setText] = useState('');
  const [{ fetching, error }, start] = useMutation(StartTask);
  const { navigate } = useRouter();
  const agent = agents.find((a) => a.id === agentId);
  const form = readForm(agent?.startForm);
  // The typed text goes as it was typed, with the form's values too (as a text part next to them).
  const go = async (formValues: Record<string, unknown> | null) => {
    const r = await start({ input: { agentId, skillId: skillId || null, text: text.trim() === '' ? null : text, formValues } });
    if (r.data) navigate(`/tasks/${encodeURIComponent(r.data.startTask.id)}`);
  };
  const e = errorInfo(error);
  return (
    <div className="dialog" role="dialog" aria-labelledby="start-h">
      <h2 id="start-h">Start a task</h2>
      <div className="field">
        <label htmlFor="start-agent">Agent</label>
        <select id="start-agent" value={agentId} onChange={(ev) => setAgentId(ev.target.value)}>
          {agents.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
      </div>
      {agent && agent.skills.length > 0 && (
        <div className="field">
          <label htmlFor="start-skill">Skill</label>
          <select id="start-skill" value={skillId} onChange={(ev) => setSkillId(ev.target.value)}>
            <option value="">Any</option>
            {agent.skills.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="field">
        <label htmlFor="start-text">Message</label>
        <textarea id="start-text" value={text} onChange={(ev) => setText(ev.target.value)} />
      </div>
      <button type="button" className="primary" disabled={fetching || !agentId || !text.trim()} onClick={() => void go(null)}>
        Start
      </button>{' '}
      {form && (
        <details>
          <summary>Or start with the agent's form</summary>
          <FormView form={form} busy={fetching} onSubmit={(values) => void go(values)} />
        </details>
      )}
      <button type="button" onClick={onClose}>
        Cancel
      </button>
      {e && (
        <p className="error" role="alert">
          {`${e.code}: ${e.message}`}
        </p>
      )}
    </div>
  );
}
