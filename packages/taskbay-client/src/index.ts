// @taskbay/client: a typed client of the Taskbay GraphQL API (docs/CLIENT.md).
export { createTaskbayClient, type TaskbayClient, type WaitForDecisionOptions } from './client.js';
export {
  CONTRACT_ERROR_CODES,
  isTaskbayError,
  TaskbayError,
  type ContractErrorCode,
  type ExtensionsOf,
  type TaskbayErrorExtensions,
  type GraphQLErrorEntry,
  type TaskbayErrorCode,
  type TaskbayErrorReason,
} from './errors.js';
export { paginate, type Connection, type NodeOf } from './paginate.js';
export type { CallOptions, PageOptions, SubscribeOptions, TaskbayClientOptions, TaskbaySubscription } from './runner.js';
// The operations' result and variable types and their typed document nodes.
export * from './gql/graphql.js';
