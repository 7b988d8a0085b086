import type { EntityManager } from '@mikro-orm/postgresql';
import type { Viewer } from './access.js';

// Who an API token or a session cookie is, remembered per instance, so a request does not spend
// statements on it. Revocation is immediate on every instance: a trigger on api_token,
// web_session and app_user (Migration20261202000310_auth_changes) notifies AUTH_CHANNEL with the
// user's id in the changing transaction; each instance's LISTEN loop drops that user's entries.
// A cached answer is used only after a round trip on the LISTEN connection that began after the
// request arrived (EventListener.sync): Postgres delivers a connection's notifications before
// answering it, so a revocation committed before the request is applied before the answer is
// used. Without a listening connection, or after it was replaced (notifications may have been
// missed in between), entries are not used. Entries also end after a short TTL, and a session's
// with the session. Unknown credentials are never cached.

export const AUTH_CHANNEL = 'taskbay_auth';

/** What the cache needs of the LISTEN loop (events/listener.ts EventListener). */
export interface NotificationBarrier {
  readonly generation: number | null;
  sync(): Promise<number | null>;
}

export interface CachedViewer {
  viewer: Viewer;
  /** When the credential itself ends (a session), if it does. */
  expiresAt?: Date;
}

interface Entry extends CachedViewer {
  until: number;
  generation: number;
}

export const VIEWER_CACHE_TTL_MS = 60_000;
export const VIEWER_CACHE_MAX_ENTRIES = 10_000;

export class ViewerCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation: a load that overlapped one is not stored. */
  private epoch = 0;

  constructor(
    private readonly barrier: NotificationBarrier,
    private readonly opts: { ttlMs: number; maxEntries: number } = { ttlMs: VIEWER_CACHE_TTL_MS, maxEntries: VIEWER_CACHE_MAX_ENTRIES },
  ) {}

  /** The viewer for `key` (a hash of the credential), from memory when still valid, else from `load`. */
  async resolve(key: string, load: () => Promise<CachedViewer | null>): Promise<Viewer | null> {
    const hit = this.entries.get(key);
    if (hit && hit.until > Date.now()) {
      const generation = await this.barrier.sync();
      // The barrier has applied every revocation committed before this request.
      if (generation !== null && generation === hit.generation && this.entries.get(key) === hit) return hit.viewer;
    }
    const generation = this.barrier.generation;
    const epoch = this.epoch;
    const loaded = await load();
    if (!loaded) {
      this.entries.delete(key);
      return null;
    }
    if (generation !== null && generation === this.barrier.generation && epoch === this.epoch) this.store(key, loaded, generation);
    return loaded.viewer;
  }

  /** A user's token, session, role or account changed (the AUTH_CHANNEL payload is the user's id). */
  invalidateUser(userId: string): void {
    this.epoch++;
    for (const [key, entry] of this.entries) if (entry.viewer.userId === userId) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private store(key: string, loaded: CachedViewer, generation: number) {
    const until = Math.min(Date.now() + this.opts.ttlMs, loaded.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY);
    this.entries.delete(key);
    this.entries.set(key, { ...loaded, until, generation });
    // Oldest first out (Map keeps insertion order).
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.opts.maxEntries) break;
      this.entries.delete(oldest);
    }
  }
}

/** The columns of app_user a viewer is made of, as the viewerFor* queries select them. */
export interface ViewerRow {
  id: string;
  tenant_id: string;
  role: Viewer['role'];
  email: string;
}

export const viewerOf = (u: ViewerRow): Viewer => ({ userId: u.id, tenantId: u.tenant_id, role: u.role, email: u.email });

const EXTENSION = 'taskbay.viewerCache';

/** Makes `cache` the one viewerFor* uses on this ORM's entity managers (startInstance). */
export function registerViewerCache(orm: { config: { registerExtension(name: string, cb: () => unknown): void } }, cache: ViewerCache) {
  orm.config.registerExtension(EXTENSION, () => cache);
}

/** Through the ORM's viewer cache when one is registered, else straight from `load`. */
export function cachedViewer(em: EntityManager, key: string, load: () => Promise<CachedViewer | null>): Promise<Viewer | null> {
  const cache = em.config.getExtension<ViewerCache>(EXTENSION);
  return cache ? cache.resolve(key, load) : load().then((v) => v?.viewer ?? null);
}
