import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// `npm run dev` proxies the runtime to a bridge on :8000 (override with BRIDGE_URL), so the
// page and the runtime share one origin; `npm run build` makes a static page to serve
// anywhere next to /copilotkit.
export default defineConfig({
  plugins: [react()],
  base: "./",
  server: {
    proxy: { "/copilotkit": process.env.BRIDGE_URL ?? "http://127.0.0.1:8000" },
  },
});
