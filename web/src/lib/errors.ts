// Apart from client.ts, which opens the live connection when imported: a component that shows
// refusals can be rendered without one (react-dom/server tests).

/** A GraphQL error's code and message, for showing refusals as they are. */
export function errorInfo(error: { graphQLErrors?: { message: string; extensions?: Record<string, unknown> }[]; message: string } | undefined | null) {
  const g = error?.graphQLErrors?.[0];
  return g
    ? { code: String(g.extensions?.code ?? 'ERROR'), message: g.message, extensions: g.extensions ?? {} }
    : error
      ? { code: 'NETWORK', message: error.message, extensions: {} }
      : null;
}
