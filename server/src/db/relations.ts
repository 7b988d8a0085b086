import { p, type EntitySchema } from '@mikro-orm/core';

// How one row refers to another, the way the migrations declare every foreign key: the property
// keeps the referenced row's id (`mapToPk`: code reads and writes ids, and nothing is loaded
// behind its back), under the column the migration created; the key is checked at commit
// (`deferrable initially deferred`) and neither updates nor deletes cascade (`no action`).
// Inverse sides (collections) are not declared: they would make a module earlier on the data
// path import a later one. Listed in docs/choices.md ("Entity relations").

/** Rows of this entity refer to a row of `target` through the foreign key `column`. */
export function manyToOneId<Target extends EntitySchema<any, any>>(target: Target, column: string) {
  return p.manyToOne(target).mapToPk().fieldName(column).deferMode('deferred').deleteRule('no action').updateRule('no action');
}

/** This entity's row extends a row of `target` and has its id: `column` is the primary key and the foreign key. */
export function sharedPrimaryKey<Target extends EntitySchema<any, any>>(target: Target, column: string) {
  return p.oneToOne(target).primary().mapToPk().fieldName(column).deferMode('deferred').deleteRule('no action').updateRule('no action');
}
