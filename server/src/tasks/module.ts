import type { EntityManager } from '@mikro-orm/postgresql';
import { byId, manyBy } from '../graphql/loaders.js';
import { Task, TaskMessage, TaskReply, TaskStatusEntry, type TaskRow, type TaskStatusRow } from './entities.js';
import { transcriptReader } from './message-pages.js';
import { pushRoute } from './push.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { TaskRef, TaskStateEnum, toGqlState } from './graphql.js';
export { type ObservationHook, registerObservationHook } from './observation-hooks.js';
export { recordObservation } from './observe.js';
export { requireOpen } from './replies.js';
export { sendToAgent } from './service.js';
export { registerTaskTransport, type TaskTransport } from './transports.js';

// Tasks with agents: sending a person's messages, observing everything an agent answers (A2A here;
// another protocol through tasks/transports.ts), and the push callback.

const loaders = (em: EntityManager) => ({
  task: byId<TaskRow>(em, Task),
  /** Transcript pages (Task.messages), within what one request may read (tasks/message-pages.ts). */
  messagePages: transcriptReader(em),
  statuses: manyBy<TaskStatusRow>(em, TaskStatusEntry, 'taskId', { at: 'asc' }),
});
type TasksLoaders = ReturnType<typeof loaders>;
declare module '../graphql/loaders.js' {
  interface Loaders extends TasksLoaders {}
}

export const tasksModule = defineModule({
  name: 'tasks',
  entities: [Task, TaskStatusEntry, TaskMessage, TaskReply],
  loaders,
  routes: [pushRoute],
});
