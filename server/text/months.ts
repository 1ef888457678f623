/** Month names, as dates in English text write them: shared by date parsing (search) and date rewriting (text). */

export const MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"] as const;

/** A month's name or its usual abbreviation, as one capturing group (match case-insensitively). */
export const MONTH_PATTERN = "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";

/** 0–11 for a month's name or abbreviation ("Sept", "may"); -1 when it names none. */
export function monthIndex(name: string): number {
  const prefix = name.toLowerCase().slice(0, 3);
  return MONTH_NAMES.findIndex((m) => m.toLowerCase().startsWith(prefix));
}
