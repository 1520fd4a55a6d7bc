-- assetlib-postgres schema, version 4: secrets the store keeps for every replica, such as the
-- key that signs download links (made on first use, 32 random bytes).
CREATE TABLE __SCHEMA__.secrets (
    name  text COLLATE "C" PRIMARY KEY,
    value bytea NOT NULL
);
