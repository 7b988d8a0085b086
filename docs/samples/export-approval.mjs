// export-approval.mjs: print one approval as an agents.approval@1 record (Node 20+).
// Usage: TASKBAY_URL=http://localhost:4000 TASKBAY_TOKEN=... node export-approval.mjs <approval uuid or apr_…>
const [id] = process.argv.slice(2);
const res = await fetch(`${process.env.TASKBAY_URL}/contracts/agents.approval@1/approvals/${encodeURIComponent(id)}`, {
  headers: { authorization: `Bearer ${process.env.TASKBAY_TOKEN}` },
});
const body = await res.json();
if (!res.ok) {
  // 401 {"error":"UNAUTHENTICATED"} or 404 {"error":"NOT_FOUND"} (not yours, or no such approval)
  console.error(`${res.status} ${body.error}: ${body.message}`);
  process.exit(1);
}
const waiting = body.decided_at === null;
console.log(JSON.stringify(body, null, 2));
console.error(waiting ? 'still waiting for a person' : `answered "${body.answer}" at ${body.decided_at}`);
