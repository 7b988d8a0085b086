import { describe, expect, it } from 'vitest';
import { besideInInbox, inboxPath, placePath, readPlace, rememberInbox } from './place';

// Issue 26, item 2: the inbox's filters, order and selection live in its URL (back restores them).

describe("the inbox's place in its URL", () => {
  it('leaves the defaults out and reads back what it wrote', () => {
    const defaults = readPlace('');
    expect(defaults).toEqual({ status: 'PENDING', agentId: '', risk: '', mine: false, sort: 'urgency', sel: null });
    expect(placePath(defaults)).toBe('/');
    const p = { status: '', agentId: 'QWdlbnQ6MQ==', risk: 'HIGH', mine: true, sort: 'newest' as const, sel: 'QXBwcm92YWw6Mg==' };
    const path = placePath(p);
    expect(readPlace(path.split('?')[1]!)).toEqual(p);
  });

  it('ignores an unknown order', () => {
    expect(readPlace('sort=sideways').sort).toBe('urgency');
  });

  it('remembers the last inbox for the approval page: its URL with another selection, and its order', () => {
    rememberInbox('/?risk=HIGH&sel=a', ['a', 'b', 'c']);
    expect(inboxPath()).toBe('/?risk=HIGH&sel=a');
    expect(inboxPath('c')).toBe('/?risk=HIGH&sel=c');
    expect(besideInInbox('b', 1)).toBe('c');
    expect(besideInInbox('a', -1)).toBeNull();
    expect(besideInInbox('z', 1)).toBeNull();
  });
});
