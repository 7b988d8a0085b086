import { describe, expect, it } from 'vitest';
import { actorName } from './audit';

// The audit trail's "By" column: names come from what the server resolved (AuditEvent.actor,
// the request's agent), never from taking an id apart.

const id = '0b6f5c1e-6a53-4c2e-9d0f-3f4a1b2c3d4e';

describe('actorName', () => {
  it('names a person by the actor the server resolved, and a person it did not by the start of the id', () => {
    expect(actorName({ actorType: 'user', actorId: id, actor: { name: 'Rita Reviewer' } })).toBe('Rita Reviewer');
    expect(actorName({ actorType: 'user', actorId: id, actor: null })).toBe('user 0b6f5c1e');
  });

  it("names an agent by the request's agent, the system as Taskbay, and anything else by its type", () => {
    expect(actorName({ actorType: 'agent', actorId: id, actor: null }, { name: 'Deploy bot' })).toBe('Deploy bot');
    expect(actorName({ actorType: 'agent', actorId: id, actor: null }, null)).toBe('agent 0b6f5c1e');
    expect(actorName({ actorType: 'system', actorId: null, actor: null })).toBe('Taskbay');
    expect(actorName({ actorType: 'service', actorId: null, actor: null })).toBe('service');
  });

  it("does not name an agent or the system by a person's actor", () => {
    expect(actorName({ actorType: 'agent', actorId: id, actor: { name: 'Rita Reviewer' } }, { name: 'Deploy bot' })).toBe('Deploy bot');
    expect(actorName({ actorType: 'system', actorId: null, actor: { name: 'Rita Reviewer' } })).toBe('Taskbay');
  });
});
