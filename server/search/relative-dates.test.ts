import { describe, expect, it } from "vitest";
import { resolveRelativeDates } from "./relative-dates";

/** Hand-written sessions: what was said, and when. */
const session = (date: string, text: string) => resolveRelativeDates(text, new Date(`${date}T19:30:00Z`));

describe("relative time resolved against the session date", () => {
  it("last night and yesterday are the day before the session", () => {
    expect(session("2022-05-02", "Joanna: Last night I finally watched that movie you recommended.")).toEqual([{ text: "Last night", from: "2022-05-01", to: "2022-05-01" }]);
    expect(session("2023-01-01", "Nate: Yesterday evening we counted down at the harbour.")).toEqual([{ text: "Yesterday evening", from: "2022-12-31", to: "2022-12-31" }]);
  });

  it("n days ago, the day before yesterday, today", () => {
    expect(session("2022-03-01", "I ran my first 10k two days ago, and today my legs hurt; the day before yesterday I rested.")).toEqual([
      { text: "two days ago", from: "2022-02-27", to: "2022-02-27" },
      { text: "today", from: "2022-03-01", to: "2022-03-01" },
      { text: "the day before yesterday", from: "2022-02-27", to: "2022-02-27" },
    ]);
    expect(session("2022-03-10", "We met 3 days ago.")).toEqual([{ text: "3 days ago", from: "2022-03-07", to: "2022-03-07" }]);
  });

  it("last week, last weekend, last month, last year, a named weekday", () => {
    // 2023-08-09 is a Wednesday: last week is Monday 31 July to Sunday 6 August.
    expect(session("2023-08-09", "Last week my sister visited.")).toEqual([{ text: "Last week", from: "2023-07-31", to: "2023-08-06" }]);
    expect(session("2023-08-09", "We hiked last weekend.")).toEqual([{ text: "last weekend", from: "2023-08-05", to: "2023-08-06" }]);
    expect(session("2023-03-15", "I changed jobs last month and moved last year.")).toEqual([
      { text: "last month", from: "2023-02-01", to: "2023-02-28" },
      { text: "last year", from: "2022-01-01", to: "2022-12-31" },
    ]);
    expect(session("2023-08-09", "The concert was last Friday.")).toEqual([{ text: "last Friday", from: "2023-08-04", to: "2023-08-04" }]);
    expect(session("2023-08-11", "Last Friday was the party.")).toEqual([{ text: "Last Friday", from: "2023-08-04", to: "2023-08-04" }]);
  });

  it("a couple of weeks ago, months ago across a year boundary", () => {
    expect(session("2023-01-20", "A couple of months ago I adopted a cat.")).toEqual([{ text: "A couple of months ago", from: "2022-11-01", to: "2022-11-30" }]);
    expect(session("2023-01-20", "a week ago")).toEqual([{ text: "a week ago", from: "2023-01-10", to: "2023-01-16" }]);
  });

  it("nothing relative, or no valid anchor: nothing", () => {
    expect(session("2023-01-20", "On 5 May 2022 we flew to Lisbon.")).toEqual([]);
    expect(resolveRelativeDates("yesterday", new Date("not a date"))).toEqual([]);
  });
});
