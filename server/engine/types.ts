/** The engine's record types and store port live with the store (the layer below); re-exported for engine code. */
export type * from "../store/types";
