// The booking walk of an LLM agent, driven through an official MCP
// TypeScript SDK, as cmd/barberd's TestMCPOfficialClients runs it:
//
//   node walk.mjs <sdk: 1 | 2> <transport: http | stdio> <day YYYY-MM-DD> <phone>
//
// http: BARBERD_URL and BARBERD_API_KEY; stdio: BARBERD_COMMAND and
// BARBERD_ARGS (a JSON list), and the environment barberd mcp reads.
// Every refusal must arrive as a tool error (isError) the model can read:
// a line with the code and detail, then the problem as JSON. Any failure
// exits 1 naming the step; success prints the steps taken as JSON.

const [sdk, kind, day, phone] = process.argv.slice(2);

let Client, HTTP, Stdio;
if (sdk === "1") {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StreamableHTTPClientTransport: HTTP } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
  ({ StdioClientTransport: Stdio } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
} else if (sdk === "2") {
  ({ Client, StreamableHTTPClientTransport: HTTP } = await import("@modelcontextprotocol/client"));
  ({ StdioClientTransport: Stdio } = await import("@modelcontextprotocol/client/stdio"));
} else {
  throw new Error(`sdk ${sdk}: want 1 or 2`);
}

const transport =
  kind === "http"
    ? new HTTP(new URL(process.env.BARBERD_URL + "/mcp"), {
        requestInit: { headers: { Authorization: "Bearer " + process.env.BARBERD_API_KEY } },
      })
    : new Stdio({
        command: process.env.BARBERD_COMMAND,
        args: JSON.parse(process.env.BARBERD_ARGS),
        env: process.env,
        stderr: "inherit",
      });

const client = new Client({ name: "barberd-walk", version: "1" });
const steps = [];
let step = "connect";

function check(ok, what) {
  if (!ok) throw new Error(what);
}

// ok calls a tool that must succeed and returns its structured content.
async function ok(name, args) {
  step = name;
  const r = await client.callTool({ name, arguments: args });
  check(!r.isError, `tool error: ${JSON.stringify(r.content)}`);
  check(r.structuredContent && typeof r.structuredContent === "object", "no structured content");
  steps.push(name);
  return r.structuredContent;
}

// refused calls a tool that must answer with a readable tool error of
// code, and returns its problem.
async function refused(name, args, code) {
  step = `${name} refused with ${code}`;
  const r = await client.callTool({ name, arguments: args });
  check(r.isError === true, `not a tool error: ${JSON.stringify(r)}`);
  check(r.content.length === 2 && r.content.every((c) => c.type === "text"), `content ${JSON.stringify(r.content)}`);
  const p = JSON.parse(r.content[1].text);
  check(p.code === code, `code ${p.code}, want ${code}: ${r.content[1].text}`);
  check(p.detail && r.content[0].text.startsWith(`${code}: ${p.detail}`), `line ${r.content[0].text}`);
  steps.push(`${name}:${code}`);
  return p;
}

function named(list, name) {
  const x = list.data.find((e) => e.name === name);
  check(x, `no ${name} in ${JSON.stringify(list.data.map((e) => e.name))}`);
  return x.id;
}

try {
  await client.connect(transport);
  step = "tools/list";
  const { tools } = await client.listTools();
  check(tools.length === 19, `${tools.length} tools`);

  const unit = named(await ok("list_units", {}), "Barbearia Chiado");
  const haircut = named(await ok("list_services", { unit_id: unit }), "Haircut");
  const joao = named(await ok("list_barbers", { unit_id: unit, service_id: haircut }), "João Silva");
  const next = await ok("find_next_slots", {
    unit_id: unit, service_id: haircut, barber_id: joao, after: `${day}T09:00:00`, limit: 3, time_from: "09:00",
  });
  check(next.slots.length === 3 && next.slots[0].starts_at === `${day}T09:00:00`, `slots ${JSON.stringify(next.slots)}`);
  const [first, second, third] = next.slots.map((s) => s.starts_at);

  const hold = await ok("hold_slot", { unit_id: unit, service_id: haircut, barber_id: joao, starts_at: first });
  check(hold.status === "active", `hold ${JSON.stringify(hold)}`);
  const ref = `walk-${sdk}-${kind}-${phone}`;
  const booking = (at, ph, reference) => ({
    unit_id: unit, service_id: haircut, barber_id: joao, starts_at: at,
    client: { name: "Ana Costa", phone: ph }, external_reference: reference,
  });
  const booked = await ok("book_appointment", { ...booking(first, phone, ref), hold_id: hold.hold_id });
  check(booked.status === "confirmed" && !booked.replayed, `booked ${JSON.stringify(booked)}`);
  const again = await ok("book_appointment", booking(third, phone, ref));
  check(again.id === booked.id && again.replayed === true, `replay ${JSON.stringify(again)}`);

  // The waitlist: the client waits for the time just booked (so it is not
  // free), is refused for a free one (slot_available: book it instead) and
  // for a second wait (already_waiting), finds the entry and leaves.
  const quarterAfter = (hm) => {
    const m = Number(hm.slice(0, 2)) * 60 + Number(hm.slice(3, 5)) + 15;
    return `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
  };
  const waitFor = (at, ph) => ({
    unit_id: unit, service_id: haircut, barber_id: joao, from: day, to: day,
    time_from: at.slice(11, 16), time_to: quarterAfter(at.slice(11, 16)), client: { name: "Ana Costa", phone: ph },
  });
  const entry = await ok("join_waitlist", waitFor(first, phone));
  check(entry.status === "waiting" && entry.offer === null && !entry.replayed, `joined ${JSON.stringify(entry)}`);
  const free = await refused("join_waitlist", waitFor(third, "+351922222222"), "slot_available");
  check(free.alternatives.some((a) => a.starts_at === third), `slot_available ${JSON.stringify(free)}`);
  const twice = await refused("join_waitlist", waitFor(first, phone), "already_waiting");
  check(twice.waitlist_entry_id === entry.id, `already_waiting ${JSON.stringify(twice)}`);
  const waiting = await ok("find_client_waitlist", { client_phone: phone, status: ["waiting"] });
  check(waiting.data.length === 1 && waiting.data[0].id === entry.id, `waiting ${JSON.stringify(waiting)}`);
  const left = await ok("leave_waitlist", { waitlist_entry_id: entry.id });
  check(left.status === "cancelled", `left ${JSON.stringify(left)}`);

  // The refusals a booking conversation meets, each readable.
  const taken = await refused("book_appointment", booking(first, "+351922222222", ref + "-taken"), "slot_unavailable");
  check(taken.status === 409 && taken.alternatives.length > 0, `taken ${JSON.stringify(taken)}`);
  await refused("get_appointment", { appointment_id: "apt_nope" }, "appointment_not_found");
  const malformed = await refused("book_appointment", booking(`${day}T10:00:00Z`, phone, ref + "-z"), "validation_failed");
  check(malformed.errors.some((e) => e.field === "starts_at"), `malformed ${JSON.stringify(malformed)}`);
  const nul = await refused("book_appointment", booking(second, phone, "x\u0000"), "validation_failed");
  check(nul.errors.some((e) => e.field === "external_reference"), `NUL ${JSON.stringify(nul)}`);
  const lone = await refused("book_appointment", { ...booking(second, phone, ref + "-s"), client: { name: "Ok\ud800", phone } }, "validation_failed");
  check(lone.errors.some((e) => e.field === "client.name"), `lone surrogate ${JSON.stringify(lone)}`);
  await refused("find_next_slots", { unit_id: unit, service_id: haircut, limit: 50 }, "validation_failed");

  const found = await ok("find_client_appointments", { client_phone: phone });
  check(found.data.length === 1 && found.data[0].id === booked.id, `found ${JSON.stringify(found)}`);
  const moved = await ok("reschedule_appointment", { appointment_id: booked.id, starts_at: second });
  check(moved.starts_at === second, `moved ${JSON.stringify(moved)}`);
  const cancelled = await ok("cancel_appointment", { appointment_id: booked.id, reason: "The client asked by chat" });
  check(cancelled.status === "cancelled", `cancelled ${JSON.stringify(cancelled)}`);
  const pending = await ok("get_pending_notifications", {});
  const mine = pending.data.filter((n) => n.appointment_id === booked.id).map((n) => n.type);
  check(
    JSON.stringify(mine) === JSON.stringify(["appointment.created", "appointment.rescheduled", "appointment.cancelled"]),
    `notifications ${JSON.stringify(mine)}`,
  );
  const acked = await ok("ack_notifications", { through: pending.data[pending.data.length - 1].id });
  check(acked.acknowledged === pending.data.length, `acknowledged ${JSON.stringify(acked)}`);
  await client.close();
  console.log(JSON.stringify({ sdk, transport: kind, appointment: booked.id, steps }));
} catch (e) {
  console.error(`${step}: ${e && e.stack ? e.stack : e}`);
  await client.close().catch(() => {});
  process.exit(1);
}
