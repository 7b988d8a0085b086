// Edit-then-approve of a send_message action, checked on the client as the server does.

/** The same limits the server applies (DESIGN.md): text 1..20000, data an object ≤ 64 KiB. */
export function validateMessageEdit(text: string, dataText: string): { action?: Record<string, unknown>; error?: string } {
  if (text.length < 1 || text.length > 20000) return { error: 'Text must be 1 to 20000 characters.' };
  if (dataText.trim() === '') return { action: { kind: 'send_message', text } };
  let data: unknown;
  try {
    data = JSON.parse(dataText);
  } catch {
    return { error: 'Data is not valid JSON.' };
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return { error: 'Data must be a JSON object.' };
  if (new TextEncoder().encode(JSON.stringify(data)).length > 64 * 1024) return { error: 'Data is larger than 64 KiB.' };
  return { action: { kind: 'send_message', text, data } };
}

