import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { requestScope } from '../log.js';
import type { SpanHandle, Tracing } from './tracing.js';

// Every GraphQL operation (HTTP and graphql-ws alike: both run Yoga's envelop) names itself on
// its request's log line, and, with tracing on, gets a span: operation type and name, and the
// error codes of its result.

function describe(document: DocumentNode, operationName: string | null | undefined): { type: string; name: string | null } {
  const op = getOperationAST(document, operationName ?? undefined);
  return { type: op?.operation ?? 'unknown', name: op?.name?.value ?? null };
}

function finish(span: SpanHandle | undefined, result: unknown) {
  if (!span) return;
  const errors = (result as ExecutionResult | null)?.errors;
  if (!errors?.length) return span.end();
  const codes = [...new Set(errors.map((e) => String(e.extensions?.code ?? 'INTERNAL_SERVER_ERROR')))];
  span.end({ attributes: { 'taskbay.graphql.error_codes': codes }, error: codes.join(',') });
}

export function useOperationObservability(tracing: Tracing | null): Plugin {
  const begin = (document: DocumentNode, operationName: string | null | undefined): SpanHandle | undefined => {
    const { type, name } = describe(document, operationName);
    const scope = requestScope();
    if (scope) {
      scope.operation = name ? `${type} ${name}` : type;
      scope.route ??= '/graphql';
    }
    return tracing?.startOperationSpan(type, name);
  };
  return {
    onExecute({ args }) {
      const span = begin(args.document, args.operationName);
      return { onExecuteDone: ({ result }) => finish(span, result) };
    },
    onSubscribe({ args }) {
      const span = begin(args.document, args.operationName);
      // The span covers setting the subscription up, not its lifetime.
      return {
        onSubscribeResult: ({ result }) => finish(span, result),
        onSubscribeError: ({ error }) => span?.end({ error: error instanceof Error ? error.message.slice(0, 500) : 'subscribe failed' }),
      };
    },
  };
}
