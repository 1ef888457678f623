import type * as React from "react";

import { cn } from "./cn";

type EmptyStateProps = Omit<React.ComponentProps<"div">, "title"> & {
  /** A lucide icon component (e.g. `Database`), or any rendered node. */
  icon?: React.ComponentType<{ className?: string }> | React.ReactNode;
  title: React.ReactNode;
  /** Say what to do next. */
  description?: React.ReactNode;
  /** Usually a Button (or a Button asChild wrapping a Link). */
  action?: React.ReactNode;
};

function isComponent(value: unknown): value is React.ComponentType<{ className?: string }> {
  // Function components, or forwardRef/memo objects (lucide icons are forwardRef objects).
  return (
    typeof value === "function" ||
    (typeof value === "object" && value !== null && "$$typeof" in value && !("props" in value))
  );
}

function EmptyState({ icon, title, description, action, className, children, ...props }: EmptyStateProps) {
  const Icon = isComponent(icon) ? icon : null;
  return (
    <div
      data-slot="empty-state"
      className={cn(
        "flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed px-6 py-12 text-center",
        className,
      )}
      {...props}
    >
      {icon != null && (
        <div
          data-slot="empty-state-icon"
          aria-hidden="true"
          className="flex size-12 items-center justify-center rounded-full bg-muted text-muted-foreground [&_svg:not([class*='size-'])]:size-6"
        >
          {Icon ? <Icon className="size-6" /> : (icon as React.ReactNode)}
        </div>
      )}
      <div className="flex max-w-sm flex-col gap-1">
        <h3 data-slot="empty-state-title" className="text-base font-semibold">
          {title}
        </h3>
        {description != null && (
          <p data-slot="empty-state-description" className="text-sm text-balance text-muted-foreground">
            {description}
          </p>
        )}
      </div>
      {action != null && (
        <div data-slot="empty-state-action" className="mt-2 flex flex-wrap items-center justify-center gap-2">
          {action}
        </div>
      )}
      {children}
    </div>
  );
}

export { EmptyState, type EmptyStateProps };
