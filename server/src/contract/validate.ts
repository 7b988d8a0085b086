import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
// A module import, not a file read: the packaged CLI carries the schema inside its bundle.
import schema from './agents.approval.v1.schema.json' with { type: 'json' };

// The one validator of agents.approval@1 exports; the schema file is the contract's field table.

const ajv = new Ajv({ allErrors: true, strict: true });
(addFormats as unknown as (a: Ajv) => void)(ajv);
const validateFn = ajv.compile(schema);

export interface ContractValidation {
  valid: boolean;
  errors: { path: string; message: string }[];
}

export function validateApprovalContract(value: unknown): ContractValidation {
  const valid = validateFn(value) as boolean;
  return {
    valid,
    errors: (validateFn.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? 'invalid' })),
  };
}
