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
//
// No dependencies, no build step: serve it as it is (veridoc serve answers
// it at /client/v1/veridoc.js) and import it as an ES module.

export const version = "1";

/** The states `onState` reports, in the order they can come. */
export const states = Object.freeze([
  "requesting", "waiting-for-wallet", "submitting", "verifying",
  // Final:
  "verified", "rejected", "test_verified", "test_rejected", "expired", "cancelled", "unsupported", "failed",
]);

const finalStatuses = new Set(["verified", "rejected", "test_verified", "test_rejected", "expired"]);

/**
 * The three calls for a backend that forwards `prefix` + serve's own routes
 * to `veridoc serve` with its API key (for example `/veridoc/v1/sessions`):
 * `session(body)` creates one, `submit(id, credential)` posts the answer,
 * `outcome(id)` long polls it. `headers` go with every call (a CSRF token).
 */
export function backend(prefix, { headers = {}, fetch = globalThis.fetch.bind(globalThis) } = {}) {
  const call = async (method, path, body) => {
    const response = await fetch(prefix + path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
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
    session: (body) => call("POST", "/v1/sessions", body),
    submit: (id, credential) => call("POST", `/v1/sessions/${encodeURIComponent(id)}/response`, credential),
    outcome: (id) => call("GET", `/v1/sessions/${encodeURIComponent(id)}?wait=20`),
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
 * One verification. `session(body)` must create an apple-wallet-web (or
 * openid4vp-dc-api) session through the backend; `body` is passed through.
 * Resolves with `{state, session}`: `state` is a final state, `session` the
 * last session object the backend returned (with `outcome` once verified or
 * rejected). Never rejects for what the user or the wallet did; it rejects
 * only for a programming error (missing calls).
 */
export async function verifyWithWallet({
  session, submit, outcome, body, onState = () => {}, signal,
  credentials = globalThis.navigator?.credentials,
}) {
  if (typeof session !== "function" || typeof submit !== "function" || typeof outcome !== "function") {
    throw new TypeError("verifyWithWallet needs session, submit and outcome functions (see backend())");
  }
  const report = (state) => { try { onState(state); } catch { /* the page's callback is the page's */ } };
  const end = (state, last = null, error = null) => { report(state); return { state, session: last, error }; };

  if (!credentials || typeof credentials.get !== "function") return end("unsupported");
  let created;
  try {
    report("requesting");
    created = await session(body);
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
  try {
    report("submitting");
    await submit(created.id, { protocol: credential.protocol, data: credential.data });
    report("verifying");
    // Long polls: each call returns when the status changes or after its wait.
    for (;;) {
      if (signal?.aborted) return end("cancelled", last);
      last = await outcome(created.id);
      if (finalStatuses.has(last?.status)) return end(last.status, last);
    }
  } catch (error) {
    return end(error?.state ?? "failed", last, String(error?.message ?? error));
  }
}
