"use client";
import { SessionProvider } from "next-auth/react";
import type { ReactNode } from "react";
import { Toaster } from "@/components/ui/sonner";
import { ThemeProvider } from "@/components/ui/theme-provider";
import { TRPCReactProvider } from "@/lib/trpc";

export function Providers({ children }: { children: ReactNode }) {
  return (
    <SessionProvider>
      <ThemeProvider attribute="class" defaultTheme="system" enableSystem disableTransitionOnChange>
        <TRPCReactProvider>
          {children}
          <Toaster richColors position="bottom-right" />
        </TRPCReactProvider>
      </ThemeProvider>
    </SessionProvider>
  );
}
