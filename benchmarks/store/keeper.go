package main

import (
	"context"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
)

// keeperSaves is how a run saves from schema 3 on: each result once, as it
// completes, through the store's Keeper.
var keeperSaves = savePattern{"keeper: each result once", func(ctx context.Context, s *store.Store, rs []result.Result) {
	k := store.NewKeeper(s, store.KeeperOptions{})
	for _, r := range rs {
		check(k.Add(ctx, r))
	}
	if sum := k.Finish(ctx); len(sum.Lost) > 0 {
		check(sum.Lost[0].Err)
	}
}}
