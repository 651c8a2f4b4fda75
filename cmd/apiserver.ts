// Placeholder until the apiserver lands: keeps `npm start` honest.
console.error('tkube apiserver: not implemented yet');
process.exit(1);
