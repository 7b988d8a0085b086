import { contractRoute } from './routes.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';

// The agents.approval@1 view of a request (seed 001), over GraphQL and REST.

export const contractModule = defineModule({
  name: 'contract',
  routes: [contractRoute],
});
