import type { Config } from './config.js';
import { A2AClient } from './a2a/client.js';
import { fetchAgentCard } from './a2a/card.js';
import type { AgentCard, SendMessageParams, SendMessageResult } from './a2a/types.js';

/** What the domain needs from the outside world, passed explicitly (tests use the real ones). */
export interface Deps {
  config: Config;
  fetchCard: (url: string) => Promise<AgentCard>;
  sendMessage: (url: string, extensions: string[], params: SendMessageParams) => Promise<SendMessageResult>;
}

export function realDeps(config: Config): Deps {
  return {
    config,
    fetchCard: (url) => fetchAgentCard(url),
    sendMessage: (url, extensions, params) => new A2AClient({ url, extensions }).sendMessage(params),
  };
}
