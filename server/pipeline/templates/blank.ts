import { Pipeline } from "../sdk";
import type { PipelineTemplate } from "./template";

export const blankTemplate: PipelineTemplate = {
  id: "blank",
  title: "Blank",
  description: "One source, nothing else. Build the steps yourself in the canvas.",
  spec: (format = "chatgpt-export") => new Pipeline("blank").source("source", { format }).toSpec(),
};
