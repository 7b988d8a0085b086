import { useEffect, useState } from 'react';

/** Re-renders every `ms` (age and countdown displays). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

export function age(iso: string, now: number): string {
  return `${duration(now - Date.parse(iso))} ago`;
}

export function countdown(iso: string | null | undefined, now: number): { text: string; expired: boolean; leftMs: number | null } {
  if (!iso) return { text: 'no expiry', expired: false, leftMs: null };
  const left = Date.parse(iso) - now;
  return left <= 0 ? { text: 'expired', expired: true, leftMs: 0 } : { text: `expires in ${duration(left)}`, expired: false, leftMs: left };
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
