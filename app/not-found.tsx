import { Compass } from "lucide-react";
import Link from "next/link";
import { Button } from "@/components/ui/button";

export const metadata = { title: "Page not found · Synthex" };

/** Any unknown URL (and notFound() anywhere in the app): the app's own 404, with a way back. */
export default function NotFound() {
  return (
    <main className="flex min-h-screen flex-col items-center justify-center gap-6 px-6 text-center" data-testid="not-found">
      <div className="text-lg font-semibold tracking-tight">Synthex</div>
      <div className="flex flex-col items-center gap-3 rounded-xl border border-dashed px-10 py-12">
        <Compass className="size-10 text-muted-foreground" />
        <p className="text-sm font-medium text-muted-foreground">404</p>
        <h1 className="text-2xl font-semibold tracking-tight">This page does not exist</h1>
        <p className="max-w-md text-sm text-muted-foreground">
          The link may be old, or the pipeline, run or record it pointed to was removed or lives in a workspace you are not a member of.
        </p>
        <Button asChild>
          <Link href="/">Go to your pipelines</Link>
        </Button>
      </div>
    </main>
  );
}
