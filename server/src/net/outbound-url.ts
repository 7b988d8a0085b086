import { badInput } from '../errors.js';

// The one check of a URL an admin gives Taskbay to connect to (an agent's card, an AG-UI
// endpoint, a webhook): http or https, and no `user:password@`. Credentials in a URL would be
// stored, audited forever and shown to everyone who reads the agent or the endpoint; fetch
// refuses them anyway (so they never worked), and the error that said so repeated them. No
// message here quotes what was given: a URL that does not parse may still hold a password.

/** Parses `raw` (trimmed) as the URL of the field `field`; BAD_USER_INPUT, quoting nothing of it, when it is not one Taskbay connects to. */
export function outboundUrl(raw: string, field: string, credentialsReason?: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badInput(`${field} is not a URL (expected http(s)://host[:port]/path)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badInput(`${field} must be http or https`);
  if (url.username || url.password) {
    throw badInput(`${field} must not carry credentials (user:password@)${credentialsReason ? `: ${credentialsReason}` : ''}`);
  }
  return url;
}
