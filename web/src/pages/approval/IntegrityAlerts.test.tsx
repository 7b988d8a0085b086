import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { makeFragmentData } from '../../gql';
import { IntegrityAlertsFields, IntegrityAlertsView } from './IntegrityAlerts';

// The approval page's integrity alerts (server/src/audit/decision-record.ts): a row Taskbay did
// not sign was refused; the page says so plainly, as a warning, with the server's words as text.

function render(alerts: { at: string; kind: string; problem: string; message: string }[]) {
  const approval = makeFragmentData({ id: 'A1', integrityAlerts: alerts.map((a, i) => ({ id: `e${i}`, ...a })) }, IntegrityAlertsFields);
  return renderToStaticMarkup(<IntegrityAlertsView approval={approval} />);
}

describe('integrity alerts on the approval page', () => {
  it('none: nothing is shown', () => {
    expect(render([])).toBe('');
  });

  it('a refused delivery: a warning (role alert) naming what was refused and why, as text', () => {
    const html = render([
      { at: '2026-12-04T10:00:00.000Z', kind: 'delivery', problem: 'no_signed_event', message: 'no signed audit event records decision <b>d1</b>' },
      { at: '2026-12-04T10:01:00.000Z', kind: 'quorum_vote', problem: 'mismatch', message: 'decision d2 differs from its signed record in: digest' },
    ]);
    expect(html).toMatch(/^<section class="error refusal" role="alert" data-testid="integrity-alerts"><p>Integrity alert: /);
    expect(html).toContain('Delivery to the agent refused: no signed audit event records decision &lt;b&gt;d1&lt;/b&gt;');
    expect(html).toContain('Quorum vote not counted: decision d2 differs from its signed record in: digest');
    expect(html).not.toContain('<b>');
  });

  it('an unknown kind is still shown, named', () => {
    expect(render([{ at: '2026-12-04T10:00:00.000Z', kind: 'later_kind', problem: 'x', message: 'm' }])).toContain('Refused (later_kind): m');
  });
});
