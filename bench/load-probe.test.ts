/**
 * bench:load's CPU meter (load-probe.ts) on real processes: it counts the CPU a process uses after
 * the meter starts, keeps the last sample of one that exits before the meter is read, and does not
 * count the CPU of children a process reaps (the postmaster reaping ended backends once put a
 * whole backend's life into whichever row was measuring).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { cpuMeter } from "./load-probe";

/** Node code that waits, burns `ms` of its own CPU time (whatever the machine's load), then idles before exiting. */
const burner = (ms: number) =>
  `setTimeout(() => { const t = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }; while (t() < ${ms}); setTimeout(() => {}, 1500); }, 200);`;

describe.runIf(process.platform === "linux")("bench:load's CPU meter", () => {
  it("counts what a process uses while metered, with its last sample once it has exited", async () => {
    const child = spawn(process.execPath, ["-e", burner(800)], { stdio: "ignore" });
    const read = cpuMeter(() => [child.pid!]);
    await once(child, "exit");
    const seconds = read();
    // 0.8 s burned (node's start-up counts toward it), sampled every 200 ms during the 1.5 s it idles before exiting.
    expect(seconds).toBeGreaterThanOrEqual(0.7);
    expect(seconds).toBeLessThan(1.3);
  });

  it("does not count the CPU of children the process reaps", async () => {
    const shell = spawn("/bin/sh", ["-c", `"${process.execPath}" -e '${burner(800)}'; sleep 0.5`], { stdio: "ignore" });
    const read = cpuMeter(() => [shell.pid!]);
    await once(shell, "exit");
    // The shell itself barely runs; its node child's 0.8 s is reaped into the shell's cutime.
    expect(read()).toBeLessThan(0.3);
  });
});
