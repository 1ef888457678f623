"use client";

import type * as React from "react";
import { ThemeProvider as NextThemesProvider } from "next-themes";

/** next-themes provider: toggles the `dark` class on <html>; defaults to the system theme. */
function ThemeProvider({ children, ...props }: React.ComponentProps<typeof NextThemesProvider>) {
  return (
    <NextThemesProvider
      attribute="class"
      defaultTheme="system"
      enableSystem
      disableTransitionOnChange
      {...props}
    >
      {children}
    </NextThemesProvider>
  );
}

export { ThemeProvider };
