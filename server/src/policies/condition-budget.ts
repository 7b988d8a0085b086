import { CONDITION_LIMITS } from '../limits.js';
import { fmt } from './condition-cost.js';

// The meter every condition evaluation runs under: one budget per request being opened, shared by
// all the conditions tried for it (policies/choose.ts). The library evaluates a condition by
// calling its evaluator's run(node) for every sub-expression; for the length of one evaluation
// that method is replaced by one that charges CONDITION_LIMITS.stepCost for the step and the size
// of the value it produced (condition-cost.ts explains sizes), and stops the evaluation with
// ConditionBudgetExceeded once the budget is spent or a value grows past valueSizeMax. The
// static bound (condition-cost.ts) means a condition saved through the API never gets there; the
// meter is for one stored behind the API's back and for a wrong estimate.
//
// A list macro's result grows in place: the library pushes onto one array as it goes. That array
// is measured as it grows (the steps that push are charged one step each: the element was
// charged when it was made) and charged once, whole, when the macro returns it.

export class ConditionBudgetExceeded extends Error {}

export interface BudgetLimits {
  workMax: number;
  valueSizeMax: number;
  stepCost: number;
}

interface Evaluator {
  run(node: { op: string; evaluate(ev: Evaluator, node: unknown, ctx: unknown): unknown }, ctx: unknown): unknown;
}

export class ConditionBudget {
  spent = 0;
  /** The largest value measured so far. */
  largestValue = 0;
  /** Set when the budget is spent: every later evaluation under it fails at once. */
  private exceeded: ConditionBudgetExceeded | null = null;
  /** Set when this evaluation went over a limit: every later step of it fails. */
  private failure: ConditionBudgetExceeded | null = null;
  /** Sizes of lists and maps measured so far (values never change once made). */
  private sizes = new WeakMap<object, number>();
  /** A list macro's result while it grows: its length and size when last measured. */
  private growing = new Map<unknown[], { length: number; size: number }>();

  constructor(readonly limits: BudgetLimits = CONDITION_LIMITS) {}

  /** Runs one evaluation under this budget: `evaluate` gets the library's evaluator to run the condition with. */
  meter<T>(evaluator: Evaluator, evaluate: () => T): T {
    if (this.exceeded) throw this.exceeded;
    this.failure = null;
    const budget = this;
    const run: Evaluator['run'] = function (this: Evaluator, node, ctx) {
      budget.charge(budget.limits.stepCost);
      const value = node.evaluate(this, node, ctx);
      budget.account(node.op, value);
      return value;
    };
    Object.defineProperty(evaluator, 'run', { value: run, configurable: true, writable: true });
    try {
      const result = evaluate();
      // A failure stops every later step, but the library catches errors inside `||`, `&&`
      // and list macros: whatever it returned after one does not count.
      if (this.failure) throw this.failure;
      return result;
    } finally {
      delete (evaluator as Partial<Evaluator>).run;
      this.growing.clear();
    }
  }

  /** Stops this evaluation (and with `spent`, every later one under this budget). */
  private refuse(message: string, spent = false): never {
    this.failure = new ConditionBudgetExceeded(message);
    if (spent) this.exceeded = this.failure;
    throw this.failure;
  }

  private charge(units: number) {
    if (this.failure) throw this.failure;
    this.spent += units;
    if (this.spent > this.limits.workMax) {
      this.refuse(`the evaluation budget of this request's conditions (${fmt(this.limits.workMax)} units) is spent`, true);
    }
  }

  private account(op: string, value: unknown) {
    if (Array.isArray(value)) {
      // The steps of a list macro that push onto (or pass on) its result, then the macro's own step.
      if (op === 'accuPush' || op === 'accuValue') return void this.grow(value);
      const growing = this.growing.get(value);
      if (growing) {
        if (op === '?:') return;
        const size = this.grow(value);
        this.growing.delete(value);
        this.sizes.set(value, size);
        return this.charge(size);
      }
    }
    this.charge(this.measure(value));
  }

  private grow(list: unknown[]): number {
    let g = this.growing.get(list);
    if (!g) {
      g = { length: 0, size: 1 };
      this.growing.set(list, g);
    }
    for (; g.length < list.length; g.length++) g.size += this.measure(list[g.length]);
    this.checkSize(g.size);
    return g.size;
  }

  private checkSize(size: number) {
    if (size > this.largestValue) this.largestValue = size;
    if (size > this.limits.valueSizeMax) {
      this.refuse(`a value of the condition grew past ${fmt(this.limits.valueSizeMax)} characters or elements`);
    }
  }

  /** A value's size: 1 + characters of a string or bytes, 1 + the sizes of a list's or map's members, 1 for anything else. */
  measure(value: unknown): number {
    if (typeof value === 'string') return this.checked(1 + value.length);
    if (typeof value !== 'object' || value === null) return 1;
    if (value instanceof Uint8Array) return this.checked(1 + value.length);
    const known = this.sizes.get(value);
    if (known !== undefined) return known;
    const g = Array.isArray(value) ? this.growing.get(value) : undefined;
    if (g) return this.grow(value as unknown[]);
    let size = 1;
    const add = (member: unknown) => {
      size += this.measure(member);
      this.checkSize(size);
    };
    if (Array.isArray(value) || value instanceof Set) for (const v of value) add(v);
    else if (value instanceof Map) {
      for (const [k, v] of value) {
        add(k);
        add(v);
      }
    } else {
      for (const [k, v] of Object.entries(value)) {
        add(k);
        add(v);
      }
    }
    this.sizes.set(value, size);
    return size;
  }

  private checked(size: number): number {
    this.checkSize(size);
    return size;
  }
}
