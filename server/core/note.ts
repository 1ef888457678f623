/** What a quick-add note is (checked by the API, shown by the app's Quick add box): no server dependencies, the browser imports it. */
import { z } from "zod";

export const MAX_NOTE_CHARS = 100_000;
export const MAX_NOTE_TITLE_CHARS = 200;

export const noteInputSchema = z.object({
  text: z
    .string()
    .trim()
    .min(1, "The note is empty: write or paste some text.")
    .max(MAX_NOTE_CHARS, `A note is at most ${MAX_NOTE_CHARS.toLocaleString("en-US")} characters: split a longer text, or import it as a file.`)
    .meta({ description: "The note, or a page's text pasted by the user (URLs are not fetched)." }),
  title: z.string().trim().max(MAX_NOTE_TITLE_CHARS, `A title is at most ${MAX_NOTE_TITLE_CHARS} characters.`).optional(),
  url: z.url({ protocol: /^https?$/, error: "An http(s) address, e.g. https://example.com/page." }).max(2000).optional().meta({ description: "Where the text came from (a label; not fetched)." }),
  scope: z.string().trim().max(256).optional().meta({ description: "Scope of the note's record, e.g. acme:user-42; default: the source's." }),
});
export type NoteInput = z.input<typeof noteInputSchema>;
