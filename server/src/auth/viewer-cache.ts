import type { EntityManager } from '@mikro-orm/postgresql';
import { FreshCache, type NotificationBarrier } from '../lib/fresh-cache.js';
import type { Viewer } from '../access.js';

// Who an API token or a session cookie is, remembered per instance, so a request does not spend
// statements on it. Revocation is immediate on every instance: a trigger on api_token,
// web_session and app_user (Migration20261202000310_auth_changes) notifies AUTH_CHANNEL with the
// user's id in the changing transaction; each instance's LISTEN loop drops that user's entries.
// A cached answer is used only as lib/fresh-cache.ts allows (after a round trip on the LISTEN
// connection begun after the request arrived, never across a replaced connection). Entries also
// end after a short TTL, and a session's or an expiring token's when it ends, so no instance
// answers from memory for a credential past its expiry (no notification tells of that). Unknown,
// revoked and expired credentials, and disabled people's, are never cached.

export const AUTH_CHANNEL = 'taskbay_auth';

export interface CachedViewer {
  viewer: Viewer;
  /** When the credential itself ends (a session, an expiring API token), if it does. */
  expiresAt?: Date;
}

export const VIEWER_CACHE_TTL_MS = 60_000;
export const VIEWER_CACHE_MAX_ENTRIES = 10_000;

export class ViewerCache {
  private readonly cache: FreshCache<CachedViewer>;

  constructor(
    barrier: NotificationBarrier,
    opts: { ttlMs: number; maxEntries: number } = { ttlMs: VIEWER_CACHE_TTL_MS, maxEntries: VIEWER_CACHE_MAX_ENTRIES },
  ) {
    this.cache = new FreshCache(() => barrier, opts);
  }

  /** The viewer for `key` (a hash of the credential), from memory when still valid, else from `load`. */
  async resolve(key: string, load: () => Promise<CachedViewer | null>): Promise<Viewer | null> {
    const hit = (await this.cache.fresh([key])).get(key);
    if (hit) return hit.viewer;
    const ticket = this.cache.ticket();
    const loaded = await load();
    if (!loaded) {
      this.cache.delete(key);
      return null;
    }
    this.cache.store(ticket, key, loaded, loaded.expiresAt?.getTime());
    return loaded.viewer;
  }

  /** A user's token, session, role or account changed (the AUTH_CHANNEL payload is the user's id). */
  invalidateUser(userId: string): void {
    this.cache.invalidateWhere((v) => v.viewer.userId === userId);
  }

  get size(): number {
    return this.cache.size;
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
