// The client is generated from openapi.yaml at build time; see openapi-generator-config.yaml.
