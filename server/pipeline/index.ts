/**
 * The pipeline definition layer: one spec (zod), its graph validation, identity (hashes), the
 * TypeScript SDK, Liquid templates, TOML import/export and diffs. See DESIGN.md §1.
 */
export * from "./spec";
export * from "./validate";
export * from "./prompts";
export * from "./hashing";
export * from "./sdk";
export * from "./templates";
export * from "./toml";
export * from "./diff";
