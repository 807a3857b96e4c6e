export * from "./tenancy";
export * from "./strategies";
export * from "./sip";
export * from "./sip-runtime";
export * from "./assistants";
export * from "./calls";
export * from "./hooks";
export * from "./relations";
