// Issue 22 finding 4, the reviewer's condition: 158 characters, split("")/map/join after cel.bind
// doubling. On a 20,000-character request it builds 400 million characters (seconds of the one
// thread every tenant shares) unless bounded. Used by the tests and by server/scripts/probe-limits.ts.

export const REVIEWER_CONDITION =
  'cel.bind(h, text.substring(0, 5000), cel.bind(d, h + h, cel.bind(q, d + d, q.split("").map(c, c + q).join("").size() > 99 || q.contains("not in the text!"))))';
