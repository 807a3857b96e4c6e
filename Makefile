.PHONY: bootstrap start test bench typecheck
bootstrap:
	bash scripts/bootstrap.sh
start: bootstrap
	bun run start
test:
	bash scripts/test.sh
typecheck: bootstrap
	bun run typecheck
