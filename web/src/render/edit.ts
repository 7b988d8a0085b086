// Edit-then-approve of a send_message action, checked on the client as the server does.
import { APPROVAL_LIMITS, codePointLength, jsonBytes } from '../../../server/src/limits.js';

const { textMin, textMax, dataMaxBytes } = APPROVAL_LIMITS;

/** The limits the server applies, from the one place they are defined. */
export function validateMessageEdit(text: string, dataText: string): { action?: Record<string, unknown>; error?: string } {
  const chars = codePointLength(text, textMax);
  if (chars < textMin || chars > textMax) return { error: `Text must be ${textMin} to ${textMax} characters.` };
  if (dataText.trim() === '') return { action: { kind: 'send_message', text } };
  let data: unknown;
  try {
    data = JSON.parse(dataText);
  } catch {
    return { error: 'Data is not valid JSON.' };
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return { error: 'Data must be a JSON object.' };
  if (jsonBytes(data) > dataMaxBytes) return { error: `Data is larger than ${dataMaxBytes / 1024} KiB.` };
  return { action: { kind: 'send_message', text, data } };
}

