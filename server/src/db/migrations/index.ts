import { Migration20261129000000_initial } from './Migration20261129000000_initial.js';

// Every committed migration, in order. Listed explicitly (not discovered from disk) so the same
// list runs under tsx, in tests and in a bundle.
export const migrationsList = [{ name: 'Migration20261129000000_initial', class: Migration20261129000000_initial }];
