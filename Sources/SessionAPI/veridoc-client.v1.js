// Veridoc browser client, version 1: one button for every browser.
//
// A web session of `veridoc serve` offers, in one navigator.credentials.get
// argument, ISO 18013-7 Annex C (org-iso-mdoc: Safari and Apple Wallet) and
// OpenID4VP 1.0 (Chrome and Android wallets); the browser picks what its
// wallets speak. This module runs one verification from a user gesture:
// it asks the integrator's backend for a session, hands the session's
// credentialRequestOptions to the browser, posts the credential the browser
// returned ({protocol, data}) back, and waits for the verdict. The API key
// stays on the backend: every call here goes to the integrator's own routes.
// What is asked (flow, elements, ages) is the backend's to decide, never the
// page's: the page is the user's to change, so this module sends no session
// body, and the backend judges the outcome it gets (docs/integration.md).
//
// No dependencies, no build step: serve it as it is (veridoc serve answers
// it at /client/v1/veridoc.js) and import it as an ES module.

export const version = "1";

/** The states `onState` reports, in the order they can come. */
export const states = Object.freeze([
  "requesting", "waiting-for-wallet", "submitting", "verifying",
  // Final:
  "verified", "rejected", "test_verified", "test_rejected", "expired", "cancelled", "abandoned", "unsupported", "failed",
]);

/** How long past the session's expiry the client waits for a verdict before it gives up. */
const graceMilliseconds = 60_000;
/** The least time between two outcome calls that came back without a final status. */
const pollPauseMilliseconds = 1_000;

const finalStatuses = new Set(["verified", "rejected", "test_verified", "test_rejected", "expired", "failed"]);

/**
 * The three calls for a backend that answers under `prefix` as serve's own
 * routes do (for example `/veridoc/v1/sessions`) and forwards them to
 * `veridoc serve` with its API key: `session()` creates one (the backend
 * writes its body: flow, origin, elements), `submit(id, credential)` posts
 * the answer, `outcome(id)` long polls it. `headers` go with every call (a
 * CSRF token); `signal` ends a call in flight.
 */
export function backend(prefix, { headers = {}, fetch = globalThis.fetch.bind(globalThis) } = {}) {
  const call = async (method, path, body, signal) => {
    const response = await fetch(prefix + path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      ...(signal ? { signal } : {}),
    });
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = null; }
    if (!response.ok) {
      throw new VeridocError("failed", `${method} ${path}: ${response.status} ${json?.error ?? ""}`.trim());
    }
    return json;
  };
  return {
    session: (signal) => call("POST", "/v1/sessions", {}, signal),
    submit: (id, credential, signal) => call("POST", `/v1/sessions/${encodeURIComponent(id)}/response`, credential, signal),
    outcome: (id, signal) => call("GET", `/v1/sessions/${encodeURIComponent(id)}?wait=20`, undefined, signal),
  };
}

/** A failure with the state it ends in. */
export class VeridocError extends Error {
  constructor(state, message) {
    super(message);
    this.name = "VeridocError";
    this.state = state;
  }
}

/**
 * One verification. `session(signal)` must create an apple-wallet-web (or
 * openid4vp-dc-api) session through the backend. Resolves with
 * `{state, session, error}`: `state` is a final state, `session` the last
 * session object the backend returned (with `outcome` once verified or
 * rejected). Never rejects for what the user or the wallet did; it rejects
 * only for a programming error (missing calls). The verdict the page shows
 * is the user's to see; the backend decides what it grants on the outcome
 * it read itself.
 */
export async function verifyWithWallet({
  session, submit, outcome, onState = () => {}, signal,
  credentials = globalThis.navigator?.credentials,
}) {
  if (typeof session !== "function" || typeof submit !== "function" || typeof outcome !== "function") {
    throw new TypeError("verifyWithWallet needs session, submit and outcome functions (see backend())");
  }
  // The page's callback is the page's: neither its exceptions nor its rejected promises end a verification.
  const report = (state) => { try { Promise.resolve(onState(state)).catch(() => {}); } catch { /* ignored */ } };
  const end = (state, last = null, error = null) => { report(state); return { state, session: last, error }; };
  const pause = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));

  // A browser without the Digital Credentials API: no session is made for nothing.
  if (typeof globalThis.DigitalCredential !== "function" || !credentials || typeof credentials.get !== "function") return end("unsupported");
  let created;
  try {
    report("requesting");
    created = await session(signal);
  } catch (error) {
    return end("failed", null, String(error?.message ?? error));
  }
  const options = created?.credentialRequestOptions
    ?? (created?.request ? { digital: { requests: [created.request] } } : null);
  if (!created?.id || !options?.digital?.requests?.length) return end("failed", created, "the session has no Digital Credentials request");

  let credential;
  try {
    report("waiting-for-wallet");
    credential = await credentials.get({ mediation: "required", ...options, ...(signal ? { signal } : {}) });
  } catch (error) {
    // The user closed the sheet, or the page aborted: nothing was shared.
    if (error?.name === "NotAllowedError" || error?.name === "AbortError") return end("cancelled", created);
    return end("failed", created, String(error?.message ?? error));
  }
  if (!credential || typeof credential.protocol !== "string" || credential.data == null) {
    return end("failed", created, "the browser returned no digital credential");
  }

  let last = created;
  // Past the session's end and a grace for the workers, the verdict is not coming.
  const expiresAt = Date.parse(created.expiresAt);
  const deadline = (Number.isFinite(expiresAt) ? expiresAt : Date.now() + 600_000) + graceMilliseconds;
  try {
    report("submitting");
    await submit(created.id, { protocol: credential.protocol, data: credential.data }, signal);
    report("verifying");
    // Long polls: each call returns when the status changes or after its wait.
    for (;;) {
      // The credential was submitted: an abort now leaves its verdict to come without the page.
      if (signal?.aborted) return end("abandoned", last);
      if (Date.now() > deadline) return end("failed", last, "no verdict by the session's end");
      const asked = Date.now();
      last = await outcome(created.id, signal);
      if (finalStatuses.has(last?.status)) return end(last.status, last);
      const spent = Date.now() - asked;
      if (spent < pollPauseMilliseconds) await pause(pollPauseMilliseconds - spent);
    }
  } catch (error) {
    if (error?.name === "AbortError") return end("abandoned", last);
    return end(error?.state ?? "failed", last, String(error?.message ?? error));
  }
}
