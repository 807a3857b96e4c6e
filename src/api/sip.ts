import type { Deps } from "./deps";
import { assertUuid } from "./access";
import { crudRoutes } from "./crud";
import { PhoneNumberModel, SipCredentialModel } from "../models/sip";
import * as sip from "../services/sip";

export const sipCredentialsRoutes = (deps: Deps) =>
  crudRoutes(deps, {
    path: "/sip/credentials",
    tag: "SIP credentials",
    what: "SIP credential",
    idParam: "sipCredentialsId",
    sortable: "id, hostname, username, createdAt",
    models: SipCredentialModel,
    service: {
      list: ({ db, scope }, query) => sip.listCredentials(db, scope, query),
      get: ({ db, scope }, id) => sip.getCredential(db, scope, id),
      create: ({ db, scope }, body) => sip.createCredential(db, deps.secrets, scope, body),
      update: ({ db, scope }, id, body) => sip.updateCredential(db, deps.secrets, scope, id, body),
      remove: ({ db, scope }, id) => sip.deleteCredential(db, scope, id),
    },
  });

const credentialOf = (params: Record<string, string>) => assertUuid(params.sipCredentialsId, "SIP credentials");

export const phoneNumbersRoutes = (deps: Deps) =>
  crudRoutes(deps, {
    path: "/sip/credentials/:sipCredentialsId/phone-numbers",
    tag: "SIP phone numbers",
    what: "phone number",
    idParam: "phoneNumberId",
    sortable: "id, phoneNumber, createdAt",
    models: PhoneNumberModel,
    service: {
      list: ({ db, scope, params }, query) => sip.listPhoneNumbers(db, scope, credentialOf(params), query),
      get: ({ db, scope, params }, id) => sip.getPhoneNumber(db, scope, credentialOf(params), id),
      create: ({ db, scope, params }, body) => sip.createPhoneNumber(db, scope, credentialOf(params), body),
      update: ({ db, scope, params }, id, body) => sip.updatePhoneNumber(db, scope, credentialOf(params), id, body),
      remove: ({ db, scope, params }, id) => sip.deletePhoneNumber(db, scope, credentialOf(params), id),
    },
  });
