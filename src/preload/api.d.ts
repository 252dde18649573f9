// The renderer's view of window.api (present in the desktop app, absent in a browser).
import type { PreloadApi } from '../shared/bridge';

declare global {
  interface Window {
    api?: PreloadApi;
  }
}

export {};
