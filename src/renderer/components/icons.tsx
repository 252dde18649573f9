// Line icons for the sidebar (16 px, drawn with currentColor; decorative, hidden from assistive tech).
import type { ReactNode } from 'react';

const Icon = ({ children }: { children: ReactNode }) => (
  <svg className="icon" width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
    {children}
  </svg>
);

export const icons = {
  bell: (
    <Icon>
      <path d="M4 11V7a4 4 0 0 1 8 0v4l1.25 1.5H2.75L4 11z" />
      <path d="M6.5 14a1.6 1.6 0 0 0 3 0" />
    </Icon>
  ),
  overview: (
    <Icon>
      <path d="M2.5 13.5h11" />
      <path d="M4 11V8M7 11V4.5M10 11V6.5M13 11V3" />
    </Icon>
  ),
  agent: (
    <Icon>
      <rect x="2" y="3" width="12" height="10" rx="1.5" />
      <path d="M5 7l2 1.5L5 10M8.5 10.5h2.5" />
    </Icon>
  ),
  connections: (
    <Icon>
      <circle cx="4" cy="4" r="1.75" />
      <circle cx="4" cy="12" r="1.75" />
      <circle cx="12" cy="8" r="1.75" />
      <path d="M5.6 4.8l4.8 2.4M5.6 11.2l4.8-2.4" />
    </Icon>
  ),
  combos: (
    <Icon>
      <path d="M2.5 4h4l3 8h4M2.5 12h4l1.2-3.2M9.8 7.2L11 4h2.5" />
    </Icon>
  ),
  cooldowns: (
    <Icon>
      <circle cx="8" cy="8.5" r="5.5" />
      <path d="M8 5.5v3l2 1.5M6.5 1.5h3" />
    </Icon>
  ),
  breakers: (
    <Icon>
      <path d="M9 1.5L3.5 9H8l-1 5.5L12.5 7H8z" />
    </Icon>
  ),
  errorRules: (
    <Icon>
      <path d="M8 1.75l5.75 10.5H2.25z" />
      <path d="M8 6v3M8 10.75v.01" />
    </Icon>
  ),
  settings: (
    <Icon>
      <path d="M2.5 4.5h6M11.5 4.5h2M2.5 11.5h2M7.5 11.5h6" />
      <circle cx="10" cy="4.5" r="1.5" />
      <circle cx="6" cy="11.5" r="1.5" />
    </Icon>
  ),
  logs: (
    <Icon>
      <path d="M5.5 4h8M5.5 8h8M5.5 12h8" />
      <circle cx="2.75" cy="4" r=".6" />
      <circle cx="2.75" cy="8" r=".6" />
      <circle cx="2.75" cy="12" r=".6" />
    </Icon>
  ),
  sessions: (
    <Icon>
      <circle cx="3.5" cy="8" r="1.75" />
      <circle cx="12.5" cy="8" r="1.75" />
      <path d="M5.25 8h5.5M8 5.5V4M8 12v-1.5" />
    </Icon>
  ),
  leases: (
    <Icon>
      <rect x="3" y="7" width="10" height="7" rx="1.5" />
      <path d="M5.5 7V5a2.5 2.5 0 015 0v2" />
    </Icon>
  ),
  prices: (
    <Icon>
      <path d="M8.5 2.5H13.5V7.5L7.5 13.5 2.5 8.5Z" />
      <circle cx="11" cy="5" r="1" />
    </Icon>
  ),
  team: (
    <Icon>
      <circle cx="5" cy="5.5" r="2" />
      <circle cx="11" cy="5.5" r="2" />
      <path d="M1.75 13c.4-2.1 1.7-3.3 3.25-3.3S7.85 10.9 8.25 13M7.75 13c.4-2.1 1.7-3.3 3.25-3.3s2.85 1.2 3.25 3.3" />
    </Icon>
  ),
  app: (
    <Icon>
      <circle cx="8" cy="8" r="6" />
      <path d="M8 7.5v3.5M8 5v.01" />
    </Icon>
  ),
};
