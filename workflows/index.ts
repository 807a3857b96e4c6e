// The workflow bundle the worker loads: every workflow of the service, nothing else.
export { hookDeliveryWorkflow } from "./hook-delivery";
export { testRunWorkflow } from "./test-run";
export { campaignWorkflow } from "./campaign";
