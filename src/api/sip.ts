import type { Deps } from "./deps";
import { ORG_PREFIX, assertUuid, organizationAccess } from "./access";
import { resourceRoutes } from "./resource-routes";
import { PageQuery } from "../models/common";
import { PhoneNumberModel, SipCredentialModel } from "../models/sip";
import * as sip from "../services/sip";

export const sipCredentialsRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/sip/credentials`,
    access: organizationAccess(deps),
    tag: "SIP credentials",
    what: "SIP credential",
    idParam: "sipCredentialsId",
    sortable: ["id", "hostname", "username", "createdAt"],
    models: { ...SipCredentialModel, query: PageQuery },
    service: {
      list: ({ scope }, _, query) => sip.listCredentials(deps.db, scope, query),
      get: ({ scope }, _, id) => sip.getCredential(deps.db, scope, id),
      create: ({ scope }, _, body) => sip.createCredential(deps.db, deps.secrets, scope, body, deps.guard),
      update: ({ scope }, _, id, body) => sip.updateCredential(deps.db, deps.secrets, scope, id, body, deps.guard),
      remove: ({ scope }, _, id) => sip.deleteCredential(deps.db, scope, id),
    },
  });

const credentialOf = (params: Record<string, string>) => assertUuid(params.sipCredentialsId, "SIP credentials");

export const phoneNumbersRoutes = (deps: Deps) =>
  resourceRoutes({
    prefix: `${ORG_PREFIX}/sip/credentials/:sipCredentialsId/phone-numbers`,
    access: organizationAccess(deps),
    tag: "SIP phone numbers",
    what: "phone number",
    idParam: "phoneNumberId",
    sortable: ["id", "phoneNumber", "createdAt"],
    models: { ...PhoneNumberModel, query: PageQuery },
    service: {
      list: ({ scope }, params, query) => sip.listPhoneNumbers(deps.db, scope, credentialOf(params), query),
      get: ({ scope }, params, id) => sip.getPhoneNumber(deps.db, scope, credentialOf(params), id),
      create: ({ scope }, params, body) => sip.createPhoneNumber(deps.db, scope, credentialOf(params), body),
      update: ({ scope }, params, id, body) => sip.updatePhoneNumber(deps.db, scope, credentialOf(params), id, body),
      remove: ({ scope }, params, id) => sip.deletePhoneNumber(deps.db, scope, credentialOf(params), id),
    },
  });
