import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

// No Docker engine on this machine kind: docker-compose.yml is checked structurally.
const compose = parse(readFileSync(new URL('../../../docker-compose.yml', import.meta.url), 'utf8'));

describe('docker-compose.yml', () => {
  it('has Postgres and two app replicas on the same DATABASE_URL', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['app', 'app2', 'postgres']);
    const db = compose.services.postgres;
    expect(db.image).toMatch(/^postgres:\d+/);
    const { POSTGRES_USER: u, POSTGRES_PASSWORD: p, POSTGRES_DB: d } = db.environment;
    for (const name of ['app', 'app2']) {
      const app = compose.services[name];
      expect(app.environment.DATABASE_URL).toBe(`postgres://${u}:${p}@postgres:5432/${d}`);
      expect(app.depends_on.postgres.condition).toBe('service_healthy');
      expect(app.command.join(' ')).toContain('npm start');
    }
  });

  it('publishes each replica on its own host port', () => {
    const ports = ['app', 'app2'].map((n) => compose.services[n].ports[0].split(':')[0]);
    expect(new Set(ports).size).toBe(2);
    expect(compose.services.postgres.healthcheck.test.join(' ')).toContain('pg_isready');
  });
});
