import { t } from "elysia";
import { NonEmpty, Nullable, OptionalNullable, Strict, Uuid } from "./common";

const DateTime = t.Date();

export const VendorModel = {
  create: t.Object({ name: NonEmpty() }, Strict),
  out: t.Object({ id: Uuid, name: t.String(), createdAt: DateTime, updatedAt: DateTime }),
};

export const OrganizationModel = {
  write: t.Object({ name: NonEmpty() }, Strict),
  out: t.Object({ id: Uuid, vendorId: Uuid, name: t.String(), createdAt: DateTime, updatedAt: DateTime }),
};

const tokenFields = {
  id: Uuid,
  vendorId: Uuid,
  organizationId: Nullable(Uuid),
  name: Nullable(t.String()),
  prefix: t.String({ description: "first characters of the token, to tell tokens apart" }),
  createdAt: DateTime,
  revokedAt: Nullable(DateTime),
};

export const ApiTokenModel = {
  create: t.Object(
    {
      name: OptionalNullable(t.String({ maxLength: 200 })),
      organizationId: OptionalNullable(Uuid),
    },
    Strict,
  ),
  out: t.Object(tokenFields),
  created: t.Object({ ...tokenFields, token: t.String({ description: "the plain token; shown only once" }) }),
};
