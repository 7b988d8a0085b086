import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { unstorableReason } from '../db/storable.js';

// A person's input is stored (and digested) exactly as sent, so a character Postgres cannot
// hold (U+0000, an unpaired surrogate) is refused up front as BAD_USER_INPUT, in one place for
// every mutation, instead of failing deep in a transaction. So is input nested too deeply to be
// serialised at all.
export function checkStorableInput(params: { query?: unknown; variables?: unknown }): void {
  const unstorable = unstorableReason(params.variables ?? null) ?? unstorableReason(params.query ?? '');
  if (unstorable) {
    throw new GraphQLError(`the request cannot be stored: ${unstorable}`, {
      extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
    });
  }
}

/** HTTP requests; graphql-ws operations call checkStorableInput from their onSubscribe. */
export function useStorableInput(): Plugin {
  return {
    onParams({ params }) {
      checkStorableInput(params);
    },
  };
}
