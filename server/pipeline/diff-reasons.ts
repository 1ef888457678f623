/** Why a node changed between two specs, and how to say it. No node imports: the browser uses it too. */
export type ChangeReason =
  | { kind: "template" }
  | { kind: "model"; from: string | null; to: string | null }
  | { kind: "temperature"; from: number | null; to: number | null }
  /** Other settings that changed, by key (`from` when the inputs were rewired, `type` when the step type changed). */
  | { kind: "config"; keys: string[] }
  | { kind: "output-schema" }
  /** The direct inputs whose version hash changed (steps only: an output's status is about its own definition). */
  | { kind: "upstream"; names: string[] }
  /** Documentation only: no re-run. */
  | { kind: "description" };

export function formatReason(reason: ChangeReason): string {
  switch (reason.kind) {
    case "template":
      return "template changed";
    case "model":
      return `model changed: ${reason.from ?? "none"} → ${reason.to ?? "none"}`;
    case "temperature":
      return `temperature changed: ${reason.from ?? "none"} → ${reason.to ?? "none"}`;
    case "config":
      return `config changed: ${reason.keys.join(", ")}`;
    case "output-schema":
      return "output schema changed";
    case "upstream":
      return `upstream ${reason.names.join(", ")} changed`;
    case "description":
      return "description changed";
  }
}
