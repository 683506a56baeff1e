package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/wirespeed/wirespeed/experiments/selfbench"
)

func main() {
	t, err := selfbench.Tables(os.Args[1])
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	var ids []string
	for id := range t {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Println("==", id)
		fmt.Print(t[id])
	}
}
