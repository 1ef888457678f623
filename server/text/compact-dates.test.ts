import { describe, expect, it } from "vitest";
import { compactDates } from "./compact-dates";

describe("compactDates: the same date in fewer words", () => {
  it("a day with a time of day: the day in the source's style, the time as 24-hour HH:MM", () => {
    expect(compactDates("# 1:56 pm on 8 May, 2023")).toBe("# 8 May 2023 13:56");
    expect(compactDates("12:09 am on 1 Jan, 2024")).toBe("1 January 2024 00:09");
    expect(compactDates("May 8, 2023 at 9:05 AM")).toBe("8 May 2023 09:05");
    expect(compactDates("13:56 on 8th of May 2023")).toBe("8 May 2023 13:56");
    expect(compactDates("2023/05/20 (Sat) 02:21")).toBe("2023-05-20 02:21");
    expect(compactDates("Sept. 3, 2022, 18:30")).toBe("3 September 2022 18:30");
  });

  it("a day alone: the ordinal, comma and 'of' go; a numeric day is written as ISO", () => {
    expect(compactDates("Date: 8th of May, 2023")).toBe("Date: 8 May 2023");
    expect(compactDates("2023/5/2")).toBe("2023-05-02");
    expect(compactDates("# Tide tables\n2024-03-05")).toBe("# Tide tables\n2024-03-05");
  });

  it("every date of a text, the words between them kept", () => {
    expect(compactDates("from 10:00 pm on 31 Dec, 2023 to January 2, 2024 at 7:15 am, the trip")).toBe("from 31 December 2023 22:00 to 2 January 2024 07:15, the trip");
  });

  it("leaves what is not a day, or not the same information shorter, as written", () => {
    for (const text of [
      "31 February 2023", // no such day
      "2023-13-01",
      "14:30 pm on 8 May 2023", // a 12-hour time past 12: the time stays as written
      "2023-05-20T13:56:00Z", // an ISO timestamp with its zone
      "8 May 2023, 13:56:07", // seconds
      "8 May 2023 13:56 UTC", // a zone
      "May 2023",
      "Caroline: I may 2 go",
      "no dates here",
    ])
      expect(compactDates(text), text).toBe(text);
  });

  it("never writes more words than it read", () => {
    const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
    for (const text of ["# 1:56 pm on 8 May, 2023", "2023/05/20 (Sat) 02:21", "May 8, 2023 at 9:05 AM", "8 May 2023", "2023-05-08"]) {
      expect(words(compactDates(text)), text).toBeLessThanOrEqual(words(text));
    }
  });
});
